// Files outside docs/ that the site shows as pages of its own, by their path in the repository.
// A page links to the file (`../../bench/README.md`), which is right when it is read as Markdown
// in the repository; the site leads the same link to the page (config.mts), and the docs build
// checks both (scripts/doc-links.mjs).
export const SITE_PAGES = {
  'bench/README.md': '/reference/benchmarks',
  'etc/index.api.md': '/api/discovery-feedback',
  'CONTRIBUTING.md': '/contributing',
  'CHANGELOG.md': '/changelog'
}

// Folders outside docs/ that the site serves as they are, at the same path (scripts/docs.mjs
// copies them): a relative link into them resolves on the site as in the repository.
export const SERVED_FOLDERS = ['schema/']
