import type { Environment } from '../eval/environment.js';
import type { EnvironmentRunContext } from '../run/environment-run.js';
import type { RunStore } from '../run/store.js';
import { applyAdvantages } from './advantages.js';
import { buildReport, writeReport, type ReportFiles } from './report.js';
import type { EvalReport } from './report-schema.js';

/** Advantages over every group, then the report; both from the whole store (cumulative across resumes). */
export function finishEval(
  store: RunStore,
  outDir: string,
  passThreshold: number,
  environment: Environment,
  suite?: { name: string; version: string; source: string },
): { report: EvalReport; files: ReportFiles } {
  applyAdvantages(store);
  const report = buildReport(store, {
    passThreshold,
    environment: { name: environment.name, version: environment.version },
    ...(suite ? { suite } : {}),
  });
  return { report, files: writeReport(outDir, report) };
}

/** An eval run's report once written, for what a caller adds on top (traj bench: report.html, validation). */
export interface FinishedEval extends EnvironmentRunContext {
  report: EvalReport;
  files: ReportFiles;
}
