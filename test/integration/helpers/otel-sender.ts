// The real OpenTelemetry JS SDK as a sender: a tracer provider with the OTLP proto or JSON trace
// exporter, and a logger provider with the OTLP log exporter, both pointed at a ProofLoop receiver.
import { context, trace, type Attributes, type Span } from '@opentelemetry/api';
import { NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';

export interface Sender {
  span(name: string, attributes: Attributes, parent?: Span): Span;
  /** Ends the span and waits until its export request was answered. */
  end(span: Span, opts?: { error?: string }): Promise<void>;
  log(eventName: string, attributes: Record<string, string | number | boolean>): Promise<void>;
  shutdown(): Promise<void>;
}

export function sender(
  endpoint: string,
  protocol: 'proto' | 'json',
  headers: Record<string, string> = {},
): Sender {
  const resource = resourceFromAttributes({ 'service.name': 'otel-sdk-test' });
  const traceOpts = { url: `${endpoint}/v1/traces`, headers };
  const logOpts = { url: `${endpoint}/v1/logs`, headers };
  const tracerProvider = new NodeTracerProvider({
    resource,
    spanProcessors: [
      new SimpleSpanProcessor(
        protocol === 'proto' ? new ProtoTraceExporter(traceOpts) : new JsonTraceExporter(traceOpts),
      ),
    ],
  });
  const loggerProvider = new LoggerProvider({
    resource,
    processors: [
      new SimpleLogRecordProcessor({
        exporter: protocol === 'proto' ? new ProtoLogExporter(logOpts) : new JsonLogExporter(logOpts),
      }),
    ],
  });
  const tracer = tracerProvider.getTracer('proofloop-test-agent', '1.0.0');
  const logger = loggerProvider.getLogger('com.anthropic.claude_code.events', '2.0.0');
  return {
    span: (name, attributes, parent) =>
      tracer.startSpan(
        name,
        { attributes },
        parent ? trace.setSpan(context.active(), parent) : context.active(),
      ),
    async end(span, opts = {}) {
      if (opts.error) span.setStatus({ code: 2, message: opts.error });
      span.end();
      await tracerProvider.forceFlush();
    },
    async log(eventName, attributes) {
      logger.emit({
        eventName,
        body: eventName,
        attributes: { 'event.name': eventName.split('.').pop()!, ...attributes },
      });
      await loggerProvider.forceFlush();
    },
    async shutdown() {
      await Promise.all([tracerProvider.shutdown(), loggerProvider.shutdown()]);
    },
  };
}
