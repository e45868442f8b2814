/** OpenTelemetry tracing of runs and requests, through the optional @opentelemetry/api peer. */
import { createRequire } from 'node:module';
// Types only: erased at build time. The API itself is loaded by `resolveTracing`, and only when tracing is configured.
import type * as Otel from '@opentelemetry/api';
import { ConfigurationError, describeError, describeValue } from '../core/index.js';
import { statusCodeOf, type RequestFn } from '../kube/index.js';

/**
 * What rxkube needs of an OpenTelemetry `TracerProvider` (`@opentelemetry/api`'s type is one);
 * structural, so that rxkube's types do not require the API to be installed.
 */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): object;
}

/** The `tracing` option: `true` traces with the globally registered tracer provider. */
export interface TracingOptions {
  /** Spans go to this provider instead of the global one (`trace.setGlobalTracerProvider`, `NodeSDK`). */
  readonly tracerProvider?: TracerProviderLike | undefined;
}

/** Attribute values a span takes. */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/**
 * Runs `work` in a child span of the active one, named `name`; the span ends when `work` settles
 * and records its error. Without tracing the work runs as it is.
 */
export type SpanFn = <T>(name: string, attributes: SpanAttributes, work: () => Promise<T>) => Promise<T>;

/** A span that was started and must be ended once (`end`). */
export interface OpenSpan {
  /** The trace and span ids, for log lines (`trace_id`, `span_id`). */
  readonly ids: TraceIds;
  setAttributes(attributes: SpanAttributes): void;
  addEvent(name: string, attributes?: SpanAttributes): void;
  /** Ends the span; with an error, marked failed and the error recorded. */
  end(error?: unknown): void;
  /** Runs `work` with this span active, so that spans started inside it are its children. */
  within<T>(work: () => T): T;
}

/** The ids a log line carries to join it to its trace. */
export interface TraceIds {
  readonly trace_id: string;
  readonly span_id: string;
}

/** An opaque reference to a span, to link a later span to it. */
export interface SpanRef {
  readonly context: unknown;
}

type OtelApi = typeof Otel;

// The API from where the package manager put the optional peer: with the peer declared, that is the
// copy the user's project resolves too (and so the one their SDK registered its provider with).
let loadedApi: OtelApi | undefined;
function otelApi(): OtelApi {
  if (loadedApi) return loadedApi;
  try {
    loadedApi = createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
  } catch (err) {
    throw new ConfigurationError(
      'tracing',
      'needs the package @opentelemetry/api: install it beside rxkube (npm install @opentelemetry/api)',
      { cause: err },
    );
  }
  return loadedApi;
}

const TRACER_NAME = 'rxkube';
/** Links kept per span: a resource changed a hundred times before its run needs no hundred links. */
export const MAX_LINKS = 8;

/** The tracing of one operator: rxkube's tracer on the user's API copy. Made by `resolveTracing`. */
export class Tracing {
  private readonly tracer: Otel.Tracer;

  private constructor(
    private readonly api: OtelApi,
    provider: TracerProviderLike | undefined,
  ) {
    // The global provider's tracer is a proxy: a provider registered after the operator was made still gets the spans.
    this.tracer = provider ? (provider.getTracer(TRACER_NAME) as Otel.Tracer) : api.trace.getTracer(TRACER_NAME);
  }

  /** Validates the option; undefined or false: no tracing, and no OpenTelemetry module is loaded. */
  static of(option: TracingOptions | boolean | undefined, name = 'tracing'): Tracing | undefined {
    if (option === undefined || option === false) return undefined;
    if (option === true) return new Tracing(otelApi(), undefined);
    if (typeof option !== 'object' || option === null)
      throw new ConfigurationError(name, `must be true, false or { tracerProvider }, got ${describeValue(option)}`);
    for (const key of Object.keys(option))
      if (key !== 'tracerProvider') throw new ConfigurationError(`${name}.${key}`, 'is not an option (known: tracerProvider)');
    const provider = option.tracerProvider;
    if (provider !== undefined && typeof (provider as Partial<TracerProviderLike>).getTracer !== 'function') {
      throw new ConfigurationError(
        `${name}.tracerProvider`,
        `must be an OpenTelemetry TracerProvider (with getTracer), got ${describeValue(provider)}`,
      );
    }
    return new Tracing(otelApi(), provider);
  }

  /**
   * Whether a context manager carries the active span across `await` (the SDK's `NodeSDK` and
   * `NodeTracerProvider.register()` register one): without it nothing nests under a run.
   */
  hasContextManager(): boolean {
    const probe = this.api.ROOT_CONTEXT.setValue(PROBE_KEY, true);
    return this.api.context.with(probe, () => this.api.context.active().getValue(PROBE_KEY) === true);
  }

  /** A span that starts a trace of its own (a run), linked to the spans that caused it. */
  startRoot(name: string, attributes: SpanAttributes, links: readonly SpanRef[]): OpenSpan {
    const span = this.tracer.startSpan(
      name,
      {
        kind: this.api.SpanKind.INTERNAL,
        attributes: clean(attributes),
        links: links.map((link) => ({ context: link.context as Otel.SpanContext })),
        root: true,
      },
      this.api.ROOT_CONTEXT,
    );
    return this.open(span, this.api.ROOT_CONTEXT);
  }

  /** A span under the active one (the webhook server's requests: `kind` server). */
  startChild(name: string, attributes: SpanAttributes, kind: 'internal' | 'client' | 'server' = 'internal'): OpenSpan {
    const parent = this.api.context.active();
    const span = this.tracer.startSpan(name, { kind: this.spanKind(kind), attributes: clean(attributes) }, parent);
    return this.open(span, parent);
  }

  /**
   * A span for a request this process serves (the webhook server's): under the caller's span when
   * the request carries one (`traceparent`, read by the registered propagator), else a root.
   */
  startServer(name: string, attributes: SpanAttributes, headers: Readonly<Record<string, string | string[] | undefined>>): OpenSpan {
    const parent = this.api.propagation.extract(this.api.ROOT_CONTEXT, headers);
    const span = this.tracer.startSpan(name, { kind: this.api.SpanKind.SERVER, attributes: clean(attributes) }, parent);
    return this.open(span, parent);
  }

  /** A span of no duration that marks a change arriving (a watch event); runs it causes link to it. */
  mark(name: string, attributes: SpanAttributes): SpanRef {
    const span = this.tracer.startSpan(
      name,
      { kind: this.api.SpanKind.CONSUMER, attributes: clean(attributes) },
      this.api.context.active(),
    );
    span.end();
    return { context: span.spanContext() };
  }

  /** Whether a span is active here (requests outside any span, a watch's list, say, are not traced). */
  inSpan(): boolean {
    return this.api.trace.getSpan(this.api.context.active()) !== undefined;
  }

  /**
   * Each request made inside a span (a run, a dependent, a status write) as a client span under
   * it, with HTTP semantic conventions; requests outside any span (informers' lists) pass untraced.
   */
  requests(request: RequestFn, server: string | undefined): RequestFn {
    const origin = server === undefined ? undefined : safeUrl(server);
    return (req) => {
      if (!this.inSpan()) return request(req);
      const query = new URLSearchParams();
      for (const [key, value] of Object.entries(req.query ?? {})) if (value !== undefined) query.set(key, String(value));
      const search = query.size > 0 ? `?${query.toString()}` : '';
      const span = this.startChild(
        req.method,
        {
          'http.request.method': req.method,
          'url.full': origin ? `${origin.origin}${req.path}${search}` : undefined,
          'url.path': req.path,
          'server.address': origin?.hostname,
          'server.port': origin ? Number(origin.port || (origin.protocol === 'https:' ? 443 : 80)) : undefined,
        },
        'client',
      );
      return span
        .within(() => request(req))
        .then(
          (answer) => {
            span.end();
            return answer;
          },
          (error: unknown) => {
            const status = statusCodeOf(error);
            if (status !== undefined) span.setAttributes({ 'http.response.status_code': status });
            span.end(error);
            throw error;
          },
        );
    };
  }

  /** The trace and span ids of the active span, for log lines; undefined outside a span. */
  activeIds(): TraceIds | undefined {
    const span = this.api.trace.getSpan(this.api.context.active());
    return span ? idsOf(span) : undefined;
  }

  readonly span: SpanFn = async (name, attributes, work) => {
    const open = this.startChild(name, attributes);
    try {
      const value = await open.within(work);
      open.end();
      return value;
    } catch (error) {
      open.end(error);
      throw error;
    }
  };

  private open(span: Otel.Span, parent: Otel.Context): OpenSpan {
    const api = this.api;
    const active = api.trace.setSpan(parent, span);
    return {
      ids: idsOf(span),
      setAttributes: (attributes) => span.setAttributes(clean(attributes)),
      addEvent: (name, attributes) => span.addEvent(name, attributes && clean(attributes)),
      end: (error) => {
        if (error !== undefined) {
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : describeError(error) });
          if (error instanceof Error) span.recordException(error);
          span.setAttribute('error.type', error instanceof Error ? error.name : typeof error);
        }
        span.end();
      },
      within: (work) => api.context.with(active, work),
    };
  }

  private spanKind(kind: 'internal' | 'client' | 'server'): Otel.SpanKind {
    return kind === 'client' ? this.api.SpanKind.CLIENT : kind === 'server' ? this.api.SpanKind.SERVER : this.api.SpanKind.INTERNAL;
  }
}

const PROBE_KEY = Symbol('rxkube.tracing.probe');

function safeUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

function idsOf(span: Otel.Span): TraceIds {
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

function clean(attributes: SpanAttributes): Otel.Attributes {
  const out: Otel.Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}

/** `work` in a span when tracing is on, else as it is. */
export function inSpan<T>(span: SpanFn | undefined, name: string, attributes: SpanAttributes, work: () => Promise<T>): Promise<T> {
  return span ? span(name, attributes, work) : work();
}
