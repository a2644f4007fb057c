// node --import ./test/support/conformance-register.mjs <conformance CLI>: see conformance-hooks.mjs.
import { register } from 'node:module';

register('./conformance-hooks.mjs', import.meta.url);
