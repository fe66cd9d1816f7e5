export {
  exportBundle,
  previewBundle,
  appVersion,
  type BundlePreview,
  type ExportOptions,
  type ExportResult,
} from './export';
export { verifyBundle, type VerifyOptions } from './verify';
export { openBundle, type OpenedBundle } from './open';
export { bundleRunInfo, type BundleRunMeta } from './run-info';
export { defaultKeyDir, loadOrCreateKeyPair } from './sign';
export * from './format';
