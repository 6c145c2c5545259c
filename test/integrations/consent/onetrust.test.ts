import { afterEach, describe, expect, it } from 'vitest'
import { oneTrustConsent } from '../../../src/integrations/consent/onetrust'
import { recordingTarget } from './banner-target'

const page = window as any

/** OneTrust's SDK as its events guide documents it: globals, IsAlertBoxClosed, OnConsentChanged, OneTrustGroupsUpdated. */
function fakeOneTrust({ groups = ',C0001,', closed = false, model = 'opt-in' } = {}) {
  const changed: ((event: unknown) => void)[] = []
  const sdk = {
    closed,
    IsAlertBoxClosed: () => sdk.closed,
    GetDomainData: () => ({ ConsentModel: { Name: model } }),
    OnConsentChanged: (callback: (event: unknown) => void) => void changed.push(callback)
  }
  const load = () => {
    page.OnetrustActiveGroups = groups
    page.OneTrust = sdk
    window.dispatchEvent(new CustomEvent('OneTrustGroupsUpdated', { detail: groups.split(',').filter(Boolean) }))
  }
  /** The visitor saves a choice: globals first, then OnConsentChanged, then the window event. */
  const choose = (active: string[], raise = { event: true, callback: true }) => {
    sdk.closed = true
    page.OnetrustActiveGroups = ',' + active.join(',') + ','
    if (raise.callback) changed.forEach((callback) => callback(new CustomEvent('consent.onetrust', { detail: active })))
    if (raise.event) window.dispatchEvent(new CustomEvent('OneTrustGroupsUpdated', { detail: active }))
  }
  return { sdk, load, choose, changed }
}

afterEach(() => {
  for (const name of ['OneTrust', 'Optanon', 'OnetrustActiveGroups', 'OptanonActiveGroups', 'OptanonWrapper']) delete page[name]
})

describe('oneTrustConsent', () => {
  it('pending at once and while OneTrust is absent; granted when it loads with C0002 active', () => {
    const { target, states } = recordingTarget()
    const stop = oneTrustConsent(target)
    expect(states).toEqual(['pending'])
    const onetrust = fakeOneTrust({ groups: ',C0001,C0002,' })
    onetrust.load()
    expect(states).toEqual(['pending', 'granted'])
    stop()
  })

  it('OneTrust loaded before: read at once; undecided stays pending, accept grants, decline after it denies', () => {
    const onetrust = fakeOneTrust()
    onetrust.load()
    const { target, states } = recordingTarget()
    const stop = oneTrustConsent(target)
    expect(states).toEqual(['pending'])
    onetrust.choose(['C0001', 'C0002'])
    expect(states).toEqual(['pending', 'granted'])
    // Withdrawal in the preference centre.
    onetrust.choose(['C0001'])
    expect(states).toEqual(['pending', 'granted', 'denied'])
    stop()
  })

  it('a returning visitor who declined (alert box closed) is denied at once; the legacy OptanonActiveGroups is read', () => {
    page.Optanon = { IsAlertBoxClosed: () => true }
    page.OptanonActiveGroups = ',C0001,C0003,'
    const { target, states } = recordingTarget()
    oneTrustConsent(target)()
    expect(states).toEqual(['pending', 'denied'])
  })

  it('opt-out model: an inactive group is a decision even before the alert box closes', () => {
    fakeOneTrust({ groups: ',C0001,', model: 'opt-out' }).load()
    const { target, states } = recordingTarget()
    oneTrustConsent(target)()
    expect(states).toEqual(['pending', 'denied'])
  })

  it('the category is an option: a renamed group is followed instead of C0002', () => {
    const onetrust = fakeOneTrust({ groups: ',C0001,C0002,' })
    onetrust.load()
    const { target, states } = recordingTarget()
    const stop = oneTrustConsent(target, { category: 'C0007' })
    expect(states).toEqual(['pending'])
    onetrust.choose(['C0001', 'C0007'])
    expect(states).toEqual(['pending', 'granted'])
    stop()
  })

  it('OnConsentChanged alone carries a change', () => {
    const onetrust = fakeOneTrust()
    onetrust.load()
    const { target, states } = recordingTarget()
    const stop = oneTrustConsent(target)
    expect(onetrust.changed).toHaveLength(1)
    onetrust.choose(['C0001', 'C0002'], { event: false, callback: true })
    expect(states).toEqual(['pending', 'granted'])
    stop()
  })

  it("leaves the shop's OptanonWrapper as it was", () => {
    const wrapper = () => {}
    page.OptanonWrapper = wrapper
    const onetrust = fakeOneTrust()
    onetrust.load()
    oneTrustConsent(recordingTarget().target)()
    expect(page.OptanonWrapper).toBe(wrapper)
  })

  it('stop(): later changes, by event or by OnConsentChanged, are not followed', () => {
    const onetrust = fakeOneTrust()
    onetrust.load()
    const { target, states } = recordingTarget()
    oneTrustConsent(target)()
    onetrust.choose(['C0001', 'C0002'])
    expect(states).toEqual(['pending'])
  })

  it('an SDK that throws leaves the tracker pending and throws nothing into the page', () => {
    const errors: unknown[] = []
    const onError = (event: ErrorEvent) => errors.push(event.error)
    window.addEventListener('error', onError)
    page.OneTrust = {
      IsAlertBoxClosed: () => {
        throw new Error('broken')
      },
      GetDomainData: () => {
        throw new Error('broken')
      },
      OnConsentChanged: () => {
        throw new Error('broken')
      }
    }
    page.OnetrustActiveGroups = ',C0001,'
    const { target, states } = recordingTarget()
    const stop = oneTrustConsent(target)
    window.dispatchEvent(new CustomEvent('OneTrustGroupsUpdated', { detail: ['C0001'] }))
    expect(states).toEqual(['pending'])
    expect(errors).toEqual([])
    window.removeEventListener('error', onError)
    stop()
  })
})
