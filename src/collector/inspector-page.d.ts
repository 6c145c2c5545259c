// The inspector's page is imported as its text (`./inspector.html?raw`): the build inlines it into
// the collector's entry (rollup.config.mjs), and the tests' runner reads it the same way.
declare module '*.html?raw' {
  const text: string
  export default text
}
