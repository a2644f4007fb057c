import { randomFillSync } from 'node:crypto';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Span as OtelSpan,
  type Tracer as OtelTracer,
} from '@opentelemetry/api';

/**
 * W3C Trace Context for the fleet. Every request gets a span: its trace id comes from an incoming
 * `traceparent` (or is new), its span id is new, and the gateway sends the span's own
 * `traceparent` downstream, so the service's span is the gateway span's child. Log lines of the
 * request carry `trace_id` and `span_id`. With an OTLP endpoint configured the spans are real
 * OpenTelemetry spans exported over OTLP/HTTP; without one only the ids travel (no SDK work).
 */
export interface FleetSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  /** The header value a downstream call sends so its span is this span's child. */
  readonly traceparent: string;
  setAttribute(key: string, value: string | number | boolean): void;
  /** Marks the span failed with the fleet's error code. */
  fail(code: string, message?: string): void;
  end(): void;
}

export interface FleetTracer {
  startSpan(
    name: string,
    options?: { traceparent?: string; kind?: 'server' | 'client' | 'internal'; attributes?: Record<string, string | number | boolean> },
  ): FleetSpan;
  /** Sends the spans still buffered (OTLP) and stops exporting. */
  shutdown(): Promise<void>;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;

/** A valid W3C traceparent, or undefined for anything else (never throws on caller input). */
export function parseTraceparent(header: string | undefined): { traceId: string; parentSpanId: string; sampled: boolean } | undefined {
  if (!header || header.length > 512) return undefined;
  const m = TRACEPARENT.exec(header.trim().toLowerCase());
  if (!m || m[1] === 'ff' || (m[1] === '00' && header.trim().length !== 55)) return undefined;
  if (/^0+$/.test(m[2]) || /^0+$/.test(m[3])) return undefined;
  return { traceId: m[2], parentSpanId: m[3], sampled: (parseInt(m[4], 16) & 1) === 1 };
}

export const formatTraceparent = (traceId: string, spanId: string, sampled = true) => `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;

const entropy = Buffer.alloc(4096);
let entropyUsed = entropy.length;

/**
 * Random ids as hex from a pooled buffer refilled 4 KiB at a time (as strong as randomBytes,
 * without a system call for every trace and span id).
 */
export function randomHex(bytes: number): string {
  if (entropyUsed + bytes > entropy.length) {
    randomFillSync(entropy);
    entropyUsed = 0;
  }
  entropyUsed += bytes;
  return entropy.toString('hex', entropyUsed - bytes, entropyUsed);
}

/** Ids only: what every service does when no OTLP endpoint is configured. */
export function idTracer(): FleetTracer {
  return {
    startSpan(_name, options = {}) {
      const parent = parseTraceparent(options.traceparent);
      const traceId = parent?.traceId ?? randomHex(16);
      const spanId = randomHex(8);
      return {
        traceId,
        spanId,
        parentSpanId: parent?.parentSpanId,
        traceparent: formatTraceparent(traceId, spanId, parent?.sampled ?? true),
        setAttribute() {},
        fail() {},
        end() {},
      };
    },
    shutdown: async () => {},
  };
}

const KINDS = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL } as const;

/** OpenTelemetry spans exported over OTLP/HTTP (JSON) to `<endpoint>/v1/traces`. */
export async function otlpTracer(options: { service: string; endpoint: string; tracesUrl?: string }): Promise<FleetTracer> {
  const [{ TracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const url = options.tracesUrl ?? `${options.endpoint.replace(/\/+$/, '')}/v1/traces`;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.service, 'service.namespace': 'mcp-fleet' }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }), scheduledDelayMillis: 500 })],
  });
  const tracer: OtelTracer = provider.getTracer('mcp-fleet');
  return {
    startSpan(name, opts = {}) {
      const parent = parseTraceparent(opts.traceparent);
      const ctx = parent
        ? trace.setSpanContext(ROOT_CONTEXT, {
            traceId: parent.traceId,
            spanId: parent.parentSpanId,
            traceFlags: parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
            isRemote: true,
          })
        : ROOT_CONTEXT;
      const span: OtelSpan = tracer.startSpan(name, { kind: KINDS[opts.kind ?? 'server'], attributes: opts.attributes }, ctx);
      const sc = span.spanContext();
      return {
        traceId: sc.traceId,
        spanId: sc.spanId,
        parentSpanId: parent?.parentSpanId,
        traceparent: formatTraceparent(sc.traceId, sc.spanId, (sc.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED),
        setAttribute: (k, v) => void span.setAttribute(k, v),
        fail: (code, message) => {
          span.setAttribute('mcp_fleet.error_code', code);
          span.setStatus({ code: SpanStatusCode.ERROR, message: message ?? code });
        },
        end: () => span.end(),
      };
    },
    shutdown: () => provider.shutdown(),
  };
}

/** The tracer a service uses: OTLP when an endpoint is configured, ids only otherwise. */
export function createTracer(options: { service: string; endpoint?: string; tracesUrl?: string }): Promise<FleetTracer> {
  return options.endpoint || options.tracesUrl
    ? otlpTracer({ service: options.service, endpoint: options.endpoint ?? '', tracesUrl: options.tracesUrl })
    : Promise.resolve(idTracer());
}

let processTracer: FleetTracer = idTracer();

/** The tracer apps use unless given one: set once at boot from OTEL_EXPORTER_OTLP_ENDPOINT. */
export function setProcessTracer(tracer: FleetTracer): void {
  processTracer = tracer;
}

export function getProcessTracer(): FleetTracer {
  return processTracer;
}
