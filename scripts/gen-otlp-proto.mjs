// Regenerates electron/otlp/proto/otlp.json, the protobufjs descriptor that the OTLP receiver and
// export-otlp decode and encode with, from the official opentelemetry-proto files vendored beside
// it (electron/otlp/proto/README.md names their commit). Run after updating those files:
//   node scripts/gen-otlp-proto.mjs
import protobuf from 'protobufjs';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

const dir = new URL('../electron/otlp/proto/', import.meta.url).pathname;
const files = [
  'collector/trace/v1/trace_service.proto',
  'collector/logs/v1/logs_service.proto',
  'collector/metrics/v1/metrics_service.proto',
].map((f) => `opentelemetry/proto/${f}`);

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => path.join(dir, target);
root.loadSync(files, { keepCase: false });
root.resolveAll();
writeFileSync(path.join(dir, 'otlp.json'), JSON.stringify(root.toJSON({ keepComments: false })) + '\n');
console.log(`wrote ${path.join(dir, 'otlp.json')}`);
