import type http from 'node:http';
import request from 'supertest';

/**
 * Calls tools of an app built in a test through the kit's `POST /tools/call {name, arguments}`, as
 * the gateway does; the supertest request is returned so tests chain `.expect(status)`.
 */
export function toolCaller(app: http.RequestListener) {
  return (name: string, args: Record<string, unknown> = {}) => request(app).post('/tools/call').send({ name, arguments: args });
}
