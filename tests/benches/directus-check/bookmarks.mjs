// node bookmarks.mjs BASE: the answer pages of the view-state tasks, as global bookmarks (presets
// with a name, no user, no role), created through the API as the administrator. Directus keeps
// a collection's filter and sort in presets, never in the URL (the collection route reads only
// ?bookmark=ID and ?all / ?archived): a hand-made answer page is /admin/content/C?bookmark=ID.
// Run right after `scripts/directus-site reset DIR`: the ids are then 3.. in this order (the
// seed made presets 1 and 2); `reset` removes them again.
const base = process.argv[2];
const login = await fetch(base + '/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'admin@example.com', password: 'lantern orchard 5' }) });
const token = (await login.json()).data.access_token;
const api = async (method, path, body) => {
  const r = await fetch(base + path, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return (await r.json()).data;
};
const ARTICLES = ['title', 'status', 'author', 'category', 'publish_date'];
const PRODUCTS = ['name', 'category', 'sku', 'price', 'stock'];
const B = [
  ['bob-drafts', 'articles', ARTICLES, ['id'], { _and: [{ status: { _eq: 'draft' } }, { author: { first_name: { _eq: 'Bob' } } }] }],
  ['garden-sold-out', 'products', PRODUCTS, ['id'], { _and: [{ category: { _eq: 'garden' } }, { stock: { _eq: 0 } }] }],
  ['by-price', 'products', PRODUCTS, ['-price'], null],
  ['alice-guides', 'articles', ARTICLES, ['id'], { _and: [{ category: { _eq: 'guide' } }, { author: { first_name: { _eq: 'Alice' } } }] }],
  ['garden-in-stock-under-15', 'products', PRODUCTS, ['id'], { _and: [{ category: { _eq: 'garden' } }, { stock: { _gt: 0 } }, { price: { _lt: 15 } }] }],
];
const out = {};
for (const [name, collection, fields, sort, filter] of B) {
  const p = await api('POST', '/presets', { bookmark: name, collection, layout: 'tabular', user: null, role: null,
    layout_query: { tabular: { fields, sort, page: 1 } }, filter });
  out[name] = p.id;
}
console.log(JSON.stringify(out));
