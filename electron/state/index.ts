export * from './snapshots';
export { buildSnapshotsInBackground, type BackgroundProgress } from './background';
