// A browser for sign-in tests: `node browser.mjs URL` follows the redirects from URL (at
// most 20), keeping cookies as a browser would, until a page answers without one; exits 0
// when that page answered 2xx. With server.mjs --sign-in, the authorization URL's redirects
// reach the client's loopback redirect URI.
const jar = new Map();
let url = process.argv[2];
if (!url) {
  console.error('usage: node browser.mjs URL');
  process.exit(2);
}
for (let hop = 0; hop < 20; hop += 1) {
  const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
  const response = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const at = pair.indexOf('=');
    jar.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
  }
  const location = response.headers.get('location');
  if (response.status >= 300 && response.status < 400 && location) {
    url = new URL(location, url).toString();
    continue;
  }
  await response.arrayBuffer();
  process.exit(response.ok ? 0 : 1);
}
console.error('browser.mjs: more than 20 redirects');
process.exit(1);
