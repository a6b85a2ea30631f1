"""Makes a copy of an adapted model folder that afd-runtime can load. usage: export_afd.py SRC
DST. Copies the base all-MiniLM-L6-v2 folder (AFD_EMBED_MODEL: config, tokenizer, modules.json,
1_Pooling, sentence_bert_config.json, the classic sentence-transformers layout that
afd-runtime's encoder.rs reads for mean pooling, normalisation and max_seq_length) to DST and
replaces its model.safetensors with SRC's adapted weights.
"""
import os, shutil, sys
from common import base_model
src, dst = sys.argv[1], sys.argv[2]
shutil.copytree(base_model(), dst, dirs_exist_ok=True)
shutil.copyfile(os.path.join(src, "model.safetensors"), os.path.join(dst, "model.safetensors"))
print("wrote", dst)
