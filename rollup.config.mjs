import nodeResolve from '@rollup/plugin-node-resolve'
import terser from '@rollup/plugin-terser'
import typescript from '@rollup/plugin-typescript'

// One source, three builds. The module builds leave nanoid and js-cookie to the shop's
// bundler; the script tag carries them, in their browser builds.
export default [
  {
    input: 'src/index.ts',
    external: ['nanoid', 'js-cookie'],
    plugins: [typescript({ declaration: true, declarationDir: 'dist', outDir: 'dist' })],
    output: [
      { file: 'dist/index.mjs', format: 'es' },
      { file: 'dist/index.cjs', format: 'cjs' }
    ]
  },
  {
    input: 'src/client.ts',
    plugins: [typescript({ declaration: true, declarationDir: 'dist', outDir: 'dist' })],
    output: [
      { file: 'dist/client.mjs', format: 'es' },
      { file: 'dist/client.cjs', format: 'cjs' }
    ]
  },
  {
    input: 'src/client-script.ts',
    plugins: [typescript({ declaration: false, outDir: 'dist' }), terser({ compress: { passes: 2 }, format: { comments: false } })],
    output: { file: 'dist/discovery-feedback-client.min.js', format: 'iife' }
  },
  {
    input: 'src/declarative-script.ts',
    plugins: [typescript({ declaration: false, outDir: 'dist' }), terser({ compress: { passes: 2 }, format: { comments: false } })],
    output: { file: 'dist/discovery-feedback-declarative.min.js', format: 'iife' }
  },
  {
    input: 'src/server.ts',
    external: ['nanoid', 'js-cookie'],
    plugins: [typescript({ declaration: true, declarationDir: 'dist', outDir: 'dist' })],
    output: [
      { file: 'dist/server.mjs', format: 'es' },
      { file: 'dist/server.cjs', format: 'cjs' }
    ]
  },
  {
    input: 'src/script.ts',
    plugins: [
      nodeResolve({ browser: true }),
      typescript({ declaration: false, outDir: 'dist' }),
      terser({ compress: { passes: 2 }, format: { comments: false } })
    ],
    output: { file: 'dist/discovery-feedback.min.js', format: 'iife' }
  }
]
