export * from './snapshots';
export * from './diff-runs';
export { buildSnapshotsInBackground, type BackgroundProgress } from './background';
