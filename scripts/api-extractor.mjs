// Runs API Extractor on each entry's built declarations (dist/*.d.ts): writes its API report to
// etc/<entry>.api.md and its doc model, which the API reference pages are made from, to
// temp/api/. Without --local, a report that differs from the one checked in fails the run, so a
// change to a public type shows in review; --local writes the new report for you to commit.
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
export const ENTRIES = {
  index: 'discovery-feedback',
  client: 'discovery-feedback/client',
  server: 'discovery-feedback/server',
  shopify: 'discovery-feedback/shopify',
  relay: 'discovery-feedback/relay',
  collector: 'discovery-feedback/collector'
}

/**
 * API Extractor's settings for one entry: its declarations (`dist/<entry>.d.ts`, or another file
 * of the same entry given as `declarations`, relative to the repository), its report in
 * `reports` when `report` (API Extractor looks for undocumented members only then), and its doc
 * model in `models`.
 */
function configOf(entry, report, declarations = `dist/${entry}.d.ts`, models = 'temp/api', reports = 'etc') {
  return ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: `<projectFolder>/${declarations}`,
      compiler: {
        overrideTsconfig: {
          compilerOptions: { target: 'es2022', lib: ['es2022', 'dom'], strict: true, skipLibCheck: true, types: [] },
          files: [declarations]
        }
      },
      apiReport: { enabled: report, reportFileName: `${entry}.api.md`, reportFolder: `<projectFolder>/${reports}/`, reportTempFolder: '<projectFolder>/temp/' },
      docModel: { enabled: true, apiJsonFilePath: `<projectFolder>/${models}/${entry}.api.json` },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      newlineKind: 'lf',
      // Findings go into the report, where a review sees them, rather than onto the console. The
      // package marks no release stages (@public, @beta). A public function, method, option or
      // type without its sentence of TSDoc is an error: the API reference is made from them.
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        extractorMessageReporting: {
          default: { logLevel: 'none', addToApiReportFile: true },
          'ae-missing-release-tag': { logLevel: 'none', addToApiReportFile: false },
          'ae-undocumented': { logLevel: 'error', addToApiReportFile: false }
        },
        tsdocMessageReporting: { default: { logLevel: 'none' } }
      }
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: root + 'package.json'
  })
}

/**
 * Runs API Extractor on one entry's declarations (`configOf`), its report and doc model written
 * to `folder` rather than etc/ and temp/api/, and returns the errors it found (an undocumented
 * public member among them), each as API Extractor words it.
 */
export function errorsOf(entry, declarations, folder) {
  const errors = []
  Extractor.invoke(configOf(entry, true, declarations, folder, folder), {
    localBuild: true,
    messageCallback(message) {
      if (message.logLevel == 'error') errors.push(`${message.messageId}: ${message.text}`)
      message.handled = true
    }
  })
  return errors
}

/** Runs API Extractor on every entry; resolves whether each succeeded. `report: false` writes the doc models only. */
export function extractAll({ local = false, report = true } = {}) {
  let succeeded = true
  for (const entry of Object.keys(ENTRIES)) {
    const result = Extractor.invoke(configOf(entry, report), { localBuild: local, showVerboseMessages: false })
    succeeded &&= result.succeeded
  }
  return succeeded
}

if (process.argv[1] == fileURLToPath(import.meta.url)) process.exitCode = extractAll({ local: process.argv.includes('--local') }) ? 0 : 1
