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

function configOf(entry, report) {
  return ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: `<projectFolder>/dist/${entry}.d.ts`,
      compiler: {
        overrideTsconfig: {
          compilerOptions: { target: 'es2022', lib: ['es2022', 'dom'], strict: true, skipLibCheck: true, types: [] },
          files: [`dist/${entry}.d.ts`]
        }
      },
      apiReport: { enabled: report, reportFileName: `${entry}.api.md`, reportFolder: '<projectFolder>/etc/', reportTempFolder: '<projectFolder>/temp/' },
      docModel: { enabled: true, apiJsonFilePath: `<projectFolder>/temp/api/${entry}.api.json` },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      newlineKind: 'lf',
      // Findings go into the report, where a review sees them, rather than onto the console. The
      // package marks no release stages (@public, @beta), and not every member has its own TSDoc.
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        extractorMessageReporting: {
          default: { logLevel: 'none', addToApiReportFile: true },
          'ae-missing-release-tag': { logLevel: 'none', addToApiReportFile: false },
          'ae-undocumented': { logLevel: 'none', addToApiReportFile: false }
        },
        tsdocMessageReporting: { default: { logLevel: 'none' } }
      }
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: root + 'package.json'
  })
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
