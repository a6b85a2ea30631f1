#!/usr/bin/env python3
"""The public API of afd-runtime before and after a change, item by item: every path a user
can name (through public modules and re-exports), each inherent method with its signature,
and each trait it implements; what differs is printed. For a change that should move code
without touching the API (a module reorganised), nothing but spellings of the same type
should differ.

    # rustdoc's JSON of each tree (stable rustdoc, with its unstable flag allowed):
    RUSTC_BOOTSTRAP=1 cargo rustdoc -p afd-runtime --features semantic,oauth,metrics,otel,redis,postgres \
        -- -Z unstable-options --output-format json      # writes target/doc/afd_runtime.json
    .ci/public-api.py before.json after.json
"""
import json,re,sys
def public_paths(p):
    d=json.load(open(p)); idx=d['index']
    out=set()
    kind=lambda it: next(iter(it['inner']))
    def sig(m):
        s=json.dumps(m['inner'].get('function',{}).get('sig',None), sort_keys=True)
        return re.sub(r'"id": \d+','"id": _',s)
    def members(it, path):
        inner=it['inner'][kind(it)]
        if not isinstance(inner,dict): return
        for iid in inner.get('impls',[]):
            im=idx.get(str(iid))
            if not im: continue
            imp=im['inner'].get('impl',{})
            if imp.get('trait') is not None:
                out.add((path+' impl '+imp['trait'].get('path',''),'trait-impl')); continue
            for mid2 in imp.get('items',[]):
                m=idx.get(str(mid2))
                if m and m.get('visibility')=='public':
                    out.add((path+'::'+m['name'], kind(m)+' '+sig(m)))
    def walk(mid, prefix, seen):
        it=idx.get(str(mid))
        mod=it['inner'].get('module') if it else None
        if not mod: return
        for cid in mod['items']:
            c=idx.get(str(cid))
            if c is None or c.get('visibility')!='public': continue
            k=kind(c)
            if k=='use':
                u=c['inner']['use']; name=u['name']; tgt=u.get('id')
                t=idx.get(str(tgt)) if tgt is not None else None
                if t is None: out.add((prefix+'::'+name,'use-external')); continue
                if u.get('is_glob'):
                    if kind(t)=='module' and tgt not in seen: walk(tgt,prefix,seen|{tgt})
                    continue
                tk=kind(t); out.add((prefix+'::'+name,tk+' '+sig(t)))
                if tk=='module' and tgt not in seen: walk(tgt,prefix+'::'+name,seen|{tgt})
                members(t, prefix+'::'+name)
            else:
                name=c.get('name')
                if name is None: continue
                out.add((prefix+'::'+name,k+' '+sig(c)))
                if k=='module': walk(cid,prefix+'::'+name,seen|{cid})
                members(c, prefix+'::'+name)
    walk(d['root'],'afd_runtime',{d['root']})
    return out
b=public_paths(sys.argv[1]); a=public_paths(sys.argv[2])
print(len(b),'public items before,',len(a),'after')
for x in sorted(b-a): print('  -',x[0],x[1][:150])
for x in sorted(a-b): print('  +',x[0],x[1][:150])
