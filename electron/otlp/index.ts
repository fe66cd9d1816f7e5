export { startOtlpReceiver, type OtlpReceiver, type OtlpReceiverOptions } from './server';
export { exportRunsOtlp, sendOtlp } from './export';
