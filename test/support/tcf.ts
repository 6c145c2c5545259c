import { GVL, TCModel, TCString } from '@iabtechlabtcf/core'

// The eleven purposes of TCF v2.2, by their names in the IAB's policy.
const PURPOSES = [
  'Store and/or access information on a device',
  'Use limited data to select advertising',
  'Create profiles for personalised advertising',
  'Use profiles to select personalised advertising',
  'Create profiles to personalise content',
  'Use profiles to select personalised content',
  'Measure advertising performance',
  'Measure content performance',
  'Understand audiences through statistics or combinations of data from different sources',
  'Develop and improve services',
  'Use limited data to select content'
]

/** A Global Vendor List with the eleven purposes and no vendors: enough for TCModel to encode a TC string, with no network. */
export const gvl = new GVL({
  gvlSpecificationVersion: 3,
  vendorListVersion: 1,
  tcfPolicyVersion: 5,
  lastUpdated: '2026-01-01T00:00:00Z',
  purposes: Object.fromEntries(PURPOSES.map((name, i) => [i + 1, { id: i + 1, name, description: name, illustrations: [] }])),
  specialPurposes: {},
  features: {},
  specialFeatures: {},
  stacks: {},
  dataCategories: {},
  vendors: {}
} as never)

/** A real TC string (CMP 10) in which exactly `purposes` have consent. */
export const tcString = (purposes: number[]) => {
  const model = new TCModel(gvl)
  model.cmpId = 10
  model.cmpVersion = 1
  model.purposeConsents.set(purposes)
  return TCString.encode(model)
}
