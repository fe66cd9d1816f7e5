export {
  exportBundle,
  previewBundle,
  appVersion,
  type BundlePreview,
  type ExportOptions,
  type ExportResult,
} from './export';
export { verifyBundle, type VerifyOptions } from './verify';
export { bundleRunInfo, openBundle, type OpenedBundle, type BundleRunMeta } from './open';
export { defaultKeyDir, loadOrCreateKeyPair } from './sign';
export * from './format';
