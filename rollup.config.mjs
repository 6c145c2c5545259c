import nodeResolve from '@rollup/plugin-node-resolve'
import terser from '@rollup/plugin-terser'
import typescript from '@rollup/plugin-typescript'

// One source, a module build per entry and a script tag per page-facing file. The module
// builds leave nanoid and js-cookie to the shop's bundler; the script tags carry them, in
// their browser builds.
const moduleBuild = (name, external = ['nanoid', 'js-cookie']) => ({
  input: `src/${name}.ts`,
  external,
  plugins: [typescript({ declaration: true, declarationDir: 'dist', outDir: 'dist' })],
  output: [
    { file: `dist/${name}.mjs`, format: 'es' },
    { file: `dist/${name}.cjs`, format: 'cjs' }
  ]
})

const scriptTag = (input, file) => ({
  input,
  plugins: [
    nodeResolve({ browser: true }),
    typescript({ declaration: false, outDir: 'dist' }),
    terser({ compress: { passes: 2 }, format: { comments: false } })
  ],
  output: { file, format: 'iife' }
})

export default [
  moduleBuild('index'),
  moduleBuild('client', []),
  moduleBuild('server'),
  scriptTag('src/client-script.ts', 'dist/discovery-feedback-client.min.js'),
  scriptTag('src/declarative-script.ts', 'dist/discovery-feedback-declarative.min.js'),
  scriptTag('src/script.ts', 'dist/discovery-feedback.min.js')
]
