/**
 * Module hooks for running the official MCP conformance CLI (@modelcontextprotocol/conformance) on
 * Node 20: its bundle imports fs.globSync (Node 22+), used only to find test files for client and
 * tier checks, never by the server scenarios. On a Node without it, the import is replaced by a
 * function that says so. Registered by conformance-register.mjs.
 */
import fs from 'node:fs';

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (typeof fs.globSync === 'function' || !url.includes('/@modelcontextprotocol/conformance/dist/')) return result;
  const source = String(result.source);
  const match = /\bglobSync as (\w+),/.exec(source);
  if (!match) return result;
  const stub = `const ${match[1]}=()=>{throw new Error('fs.globSync needs Node 22');};`;
  const rest = source.replace(match[0], '');
  // After the shebang line, if any: it must stay first.
  const at = rest.startsWith('#!') ? rest.indexOf('\n') + 1 : 0;
  return { ...result, source: rest.slice(0, at) + stub + rest.slice(at) };
}
