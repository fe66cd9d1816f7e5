export * from './snapshots';
export * from './diff-runs';
export { buildSnapshotsInBackground, type BackgroundProgress } from './background';
export { Activity, type ActivityCell } from './activity';
