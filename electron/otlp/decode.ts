import protobuf from 'protobufjs/light.js';
import descriptor from './proto/otlp.json';
import * as json from './decode-json';
import * as proto from './decode-proto';
import { DecodeError, type Decoded, type Signal } from './types';

/**
 * OTLP export requests, protobuf or JSON, to the receiver's records. Protobuf is decoded by
 * protobufjs over the official opentelemetry-proto definitions (proto/README.md) and its messages
 * read as they are (decode-proto.ts); JSON is parsed and walked in the OTLP JSON mapping
 * (decode-json.ts). Both give the same records for the same request.
 */

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const PKG = 'opentelemetry.proto.collector';
export const requestTypes = {
  traces: root.lookupType(`${PKG}.trace.v1.ExportTraceServiceRequest`),
  logs: root.lookupType(`${PKG}.logs.v1.ExportLogsServiceRequest`),
  metrics: root.lookupType(`${PKG}.metrics.v1.ExportMetricsServiceRequest`),
};
export const responseTypes = {
  traces: root.lookupType(`${PKG}.trace.v1.ExportTraceServiceResponse`),
  logs: root.lookupType(`${PKG}.logs.v1.ExportLogsServiceResponse`),
  metrics: root.lookupType(`${PKG}.metrics.v1.ExportMetricsServiceResponse`),
};

/** google.rpc.Status, the body of an OTLP/HTTP error response (it is not in opentelemetry-proto). */
export const StatusType = new protobuf.Type('Status')
  .add(new protobuf.Field('code', 1, 'int32'))
  .add(new protobuf.Field('message', 2, 'string'));
new protobuf.Root().define('google.rpc').add(StatusType);

export { LIMITS } from './decode-values';

export type Encoding = 'protobuf' | 'json';

/** The request object of one signal from its body; throws DecodeError naming what is wrong. */
export function decodeRequest(signal: Signal, body: Buffer, encoding: Encoding): Decoded {
  if (encoding === 'protobuf') {
    const type = requestTypes[signal];
    let req: unknown;
    try {
      // A nesting deep enough to exhaust the stack is a RangeError here, answered like any bad body.
      req = type.decode(body);
    } catch (e) {
      throw new DecodeError(`not an OTLP ${type.name} in protobuf: ${(e as Error).message}`);
    }
    if (signal === 'traces') return { signal, records: proto.spansOf(req as proto.PbTraces) };
    if (signal === 'logs') return { signal, records: proto.logsOf(req as proto.PbLogs) };
    // Metrics are read from toObject's plain form by the JSON walk (metricsOf says why).
    const plain = requestTypes.metrics.toObject(req as protobuf.Message, {
      longs: String,
      bytes: String,
      enums: Number,
    });
    return { signal, records: json.metricsOf(plain) };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw new DecodeError(`not JSON: ${(e as Error).message}`);
  }
  const req = json.requestObject(parsed);
  if (signal === 'traces') return { signal, records: json.spansOf(req) };
  if (signal === 'logs') return { signal, records: json.logsOf(req) };
  return { signal, records: json.metricsOf(req) };
}
