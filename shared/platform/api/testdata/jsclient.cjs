// Drives every family through the platform's official JavaScript client (npm @ngrok/ngrok-api):
// create, get, update, list with paging, delete, not found after delete. Run by
// TestJavaScriptClient (jsclient_test.go), which passes on stdin:
//   {"module": path of the client package, "baseUrl", "token",
//    "families": [{"path", "creates": [three bodies], "update": body,
//                  "modules": [{"name", "body"}, …] (edges only),
//                  "operations": those served of "update", "list", "delete"}, …],
//    "subscription": {"create": body}}
// and reads one JSON line per family from stdout: {"path", "error", "absent", "modules"}: error
// is "" when every step passed, absent is true for a family the client has no service for
// (nothing was run), and modules are the edge modules driven (the others the client lacks).
//
// Each family's service is found in the client's own source (serviceFor): the one whose get
// requests the family's item, `${path}/${id}`; an edge module's, `${path}/${id}/${name}`.
//
// Two steps do not use the client, on purpose:
//   - delete: the client's delete() parses the empty body of the 204 as JSON and rejects; the
//     endpoint is called directly (same URL, method and headers as the client sends).
//   - endpoints: the client can only get and list them; create, update and delete are direct.
'use strict';

const fs = require('fs');
const spec = JSON.parse(fs.readFileSync(0, 'utf8'));
const { Ngrok } = require(spec.module);
const fetch = require(require.resolve('node-fetch', { paths: [spec.module] }));

const ngrok = new Ngrok({ apiToken: spec.token, baseUrl: spec.baseUrl });
const headers = { Authorization: 'Bearer ' + spec.token, 'Ngrok-Version': '2', 'Content-Type': 'application/json' };

// serviceFor is the client's service whose get requests url (its source names it as a template
// literal, `/api_keys/${id}`), among the client's services and their groups (backends, edges,
// edgeModules); undefined when the client has none, and an error when it has several.
function serviceFor(url) {
  const literal = '`' + url + '`';
  const groups = [ngrok, ...Object.values(ngrok).filter(v => v && v.constructor === Object)];
  const found = groups.flatMap(g => Object.values(g)).filter(svc =>
    svc && typeof svc.get === 'function' && svc.get.toString().includes(literal));
  if (found.length > 1) throw new Error(`${found.length} services of the client request ${url}`);
  return found[0];
}

function check(cond, what) {
  if (!cond) throw new Error(what);
}

// camel is the client's spelling of a wire member name in the objects it returns.
const camel = s => s.replace(/([-_]\w)/g, g => g[1].toUpperCase());

// asClient renames members as the client does, so direct answers compare with the client's.
function asClient(v) {
  if (Array.isArray(v)) return v.map(asClient);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [camel(k), asClient(x)]));
}

// direct sends a request without the client; it returns the status and the body as the client
// would return it.
async function direct(method, path, body) {
  const res = await fetch(spec.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, json: text ? asClient(JSON.parse(text)) : null };
}

// notFound asserts that the client call fails with the platform's 404.
async function notFound(call, what) {
  try {
    await call();
  } catch (e) {
    check(e.statusCode === 404, `${what}: rejected with ${JSON.stringify(e)}, want status_code 404`);
    check(e.details instanceof Map && e.details.get('operationId') !== undefined, `${what}: error details without the operation id`);
    return;
  }
  throw new Error(`${what}: succeeded after the delete`);
}

// family drives f through its service svc; it returns the names of the edge modules driven.
async function family(f, svc) {
  const viaClient = f.path !== '/endpoints';
  const create = async body => viaClient ? svc.create(body) : (await direct('POST', f.path, body)).json;
  const created = [];
  for (const body of f.creates) {
    const it = await create(body);
    check(it && typeof it.id === 'string' && it.uri === spec.baseUrl + f.path + '/' + it.id, `create: ${JSON.stringify(it)}`);
    check(typeof it.createdAt === 'string', `create: no createdAt in ${JSON.stringify(it)}`);
    created.push(it.id);
  }
  const id = created[2];
  const got = await svc.get(id);
  check(got.id === id && got.uri === spec.baseUrl + f.path + '/' + id, `get: ${JSON.stringify(got)}`);

  // An operation the family does not serve is an unknown route: 404, the client not involved.
  const serves = op => (f.operations || []).includes(op);
  for (const [op, method, path] of [['update', 'PATCH', `${f.path}/${id}`], ['list', 'GET', f.path], ['delete', 'DELETE', `${f.path}/${id}`]]) {
    if (serves(op)) continue;
    const res = await direct(method, path, method === 'PATCH' ? { id } : undefined);
    check(res.status === 404, `${op}, which the family does not serve: ${res.status} ${res.text}, want 404`);
  }
  if (serves('update')) await update(f, svc, id);

  // Edge modules: the client's replace sends {id, module}; get and the edge show what it answered;
  // after a delete (direct, as for items) the module is 404 and the edge shows null.
  const driven = [];
  for (const m of f.modules || []) {
    const mod = serviceFor(`${f.path}/\${id}/${m.name}`);
    if (!mod) continue;
    driven.push(m.name);
    const put = await mod.replace({ id, module: m.body });
    check(put && typeof put === 'object', `${m.name} replace: ${JSON.stringify(put)}`);
    const read = await mod.get(id);
    check(JSON.stringify(read) === JSON.stringify(put), `${m.name} get: ${JSON.stringify(read)} differs from ${JSON.stringify(put)}`);
    const shown = (await svc.get(id))[camel(m.name)];
    check(JSON.stringify(shown) === JSON.stringify(put), `${m.name} on the edge: ${JSON.stringify(shown)} differs from ${JSON.stringify(put)}`);
    const res = await direct('DELETE', `${f.path}/${id}/${m.name}`);
    check(res.status === 204 && res.text === '', `${m.name} delete: ${res.status} ${res.text}`);
    await notFound(() => mod.get(id), `${m.name} get after delete`);
    check((await svc.get(id))[camel(m.name)] === null, `${m.name} after delete: not null on the edge`);
  }

  if (serves('list')) {
    // A page of one item at a time: the client follows with beforeId until next_page_uri is null.
    const listed = (await svc.list(undefined, '1')).map(it => it.id);
    check(new Set(listed).size === listed.length, `list repeats items: ${listed}`);
    for (const c of created) check(listed.includes(c), `list (pages of 1) misses ${c}: ${listed}`);
    const order = listed.filter(x => created.includes(x));
    check(JSON.stringify(order) === JSON.stringify([...created].sort().reverse()), `list order ${order}, want newest first`);
  }

  if (!serves('delete')) {
    check(JSON.stringify(await svc.get(id)) === JSON.stringify(got), `get again: ${JSON.stringify(await svc.get(id))} differs from ${JSON.stringify(got)}`);
    return driven;
  }
  for (const c of created) {
    // Not svc.delete: it parses the empty body of the 204 as JSON (see the top of this file).
    const res = await direct('DELETE', f.path + '/' + c);
    check(res.status === 204 && res.text === '', `delete ${c}: ${res.status} ${res.text}`);
    await notFound(() => svc.get(c), `get ${c}`);
  }
  if (viaClient && serves('update')) {
    await notFound(() => svc.update({ ...f.update, id }), 'update');
  }
  return driven;
}

// update sends the family's update through the client and reads it back.
async function update(f, svc, id) {
  const viaClient = f.path !== '/endpoints';
  // The client sends its whole argument, the path's id included, as the PATCH body.
  const updated = viaClient ? await svc.update({ ...f.update, id }) : (await direct('PATCH', f.path + '/' + id, { ...f.update, id })).json;
  check(updated && updated.id === id, `update: ${JSON.stringify(updated)}`);
  for (const [k, v] of Object.entries(f.update)) {
    if (typeof v !== 'object') {
      check(JSON.stringify(updated[camel(k)]) === JSON.stringify(v), `update: ${k} is ${JSON.stringify(updated[camel(k)])}, want ${JSON.stringify(v)}`);
    }
  }
  const again = await svc.get(id);
  check(JSON.stringify(again) === JSON.stringify(updated), `get after update: ${JSON.stringify(again)} differs from ${JSON.stringify(updated)}`);
}

// The sources of a subscription: a sub-resource keyed by type whose create and update bodies
// repeat the path's subscription id (and type).
async function sources() {
  const sub = await ngrok.eventSubscriptions.create(spec.subscription.create);
  const subscriptionId = sub.id;
  const type = 'ip_policy_created.v0';
  const src = await ngrok.eventSources.create({ subscriptionId, type });
  check(src.type === type && src.uri === `${spec.baseUrl}/event_subscriptions/${subscriptionId}/sources/${type}`, `create: ${JSON.stringify(src)}`);
  const got = await ngrok.eventSources.get({ subscriptionId, type });
  check(JSON.stringify(got) === JSON.stringify(src), `get: ${JSON.stringify(got)}`);
  const updated = await ngrok.eventSources.update({ subscriptionId, type });
  check(JSON.stringify(updated) === JSON.stringify(src), `update: ${JSON.stringify(updated)}`);
  const list = await ngrok.eventSources.list({ subscriptionId });
  check(list.sources.some(s => s.type === type), `list: ${JSON.stringify(list)}`);
  const res = await direct('DELETE', `/event_subscriptions/${subscriptionId}/sources/${type}`);
  check(res.status === 204 && res.text === '', `delete: ${res.status} ${res.text}`);
  await notFound(() => ngrok.eventSources.get({ subscriptionId, type }), 'get after delete');
  await notFound(() => ngrok.eventSources.update({ subscriptionId, type }), 'update after delete');
}

(async () => {
  const runs = spec.families.map(f => [f.path, () => {
    // The literal the client's source holds: ${id} itself, not a value.
    const svc = serviceFor(`${f.path}/\${id}`);
    return svc ? family(f, svc) : null;
  }]);
  runs.push(['/event_subscriptions/{subscription_id}/sources', async () => { await sources(); return []; }]);
  for (const [path, run] of runs) {
    let error = '', modules = [], absent = false;
    try {
      const driven = await run();
      absent = driven === null;
      modules = driven || [];
    } catch (e) {
      error = e instanceof Error ? e.message : JSON.stringify(e);
    }
    process.stdout.write(JSON.stringify({ path, error, absent, modules }) + '\n');
  }
})();
