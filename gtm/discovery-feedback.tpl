___TERMS_OF_SERVICE___

By creating or modifying this file you agree to Google Tag Manager's Community
Template Gallery Developer Terms of Service available at
https://developers.google.com/tag-manager/gallery-tos (or such other URL as
Google may provide), as modified from time to time.


___INFO___

{
  "type": "TAG",
  "id": "cvt_temp_public_id",
  "version": 1,
  "securityGroups": [],
  "displayName": "discovery-feedback tracker",
  "categories": ["ANALYTICS"],
  "brand": {
    "id": "discovery_feedback",
    "displayName": "discovery-feedback"
  },
  "description": "Loads the discovery-feedback script tag, creates its tracker with your key and endpoint, passes GTM's analytics_storage consent on to it, and can bridge the GA4 data layer. Calls made before it loads wait in its queue.",
  "containerContexts": ["WEB"]
}


___TEMPLATE_PARAMETERS___

[
  {
    "type": "TEXT",
    "name": "key",
    "displayName": "API key",
    "simpleValueType": true,
    "valueValidators": [{ "type": "NON_EMPTY" }],
    "help": "Your merchant API key, sent as key in every event."
  },
  {
    "type": "TEXT",
    "name": "endpoint",
    "displayName": "Collector URL",
    "simpleValueType": true,
    "valueValidators": [{ "type": "NON_EMPTY" }],
    "help": "Where the batches go: the collector, or your first-party relay, e.g. /df/events."
  },
  {
    "type": "TEXT",
    "name": "scriptUrl",
    "displayName": "Script URL",
    "simpleValueType": true,
    "defaultValue": "https://unpkg.com/discovery-feedback/dist/discovery-feedback.min.js",
    "valueValidators": [{ "type": "NON_EMPTY" }],
    "help": "The script tag's URL. Another host than unpkg.com needs its pattern added to this template's Injects scripts permission."
  },
  {
    "type": "CHECKBOX",
    "name": "bridgeDataLayer",
    "checkboxText": "Bridge the GA4 data layer: purchase, select_item, view_item and the cart events become the tracker's events",
    "simpleValueType": true,
    "defaultValue": true,
    "help": "Loads the data-layer bridge before the tracker, so that GA4 e-commerce events pushed to the dataLayer are sent without code (README \"GA4 data layer\"). Leave it off if your pages track these events themselves."
  },
  {
    "type": "TEXT",
    "name": "bridgeUrl",
    "displayName": "Data-layer bridge URL",
    "simpleValueType": true,
    "defaultValue": "https://unpkg.com/discovery-feedback/dist/discovery-feedback-datalayer.min.js",
    "valueValidators": [{ "type": "NON_EMPTY" }],
    "enablingConditions": [{ "paramName": "bridgeDataLayer", "paramValue": true, "type": "EQUALS" }],
    "help": "The bridge's URL, from the same place as the script tag."
  }
]


___SANDBOXED_JS_FOR_WEB_TEMPLATE___

// Until the script tag has loaded, a queue stands in for its command function: the same stub
// README's script tag snippet writes (window.discoveryFeedback.q). Every call goes through the
// global by name (callInWindow), so that once the script has replaced the stub, later calls (a
// consent change) reach the tracker, not the old queue.
const createArgumentsQueue = require('createArgumentsQueue');
const copyFromWindow = require('copyFromWindow');
const getType = require('getType');
const callInWindow = require('callInWindow');
const injectScript = require('injectScript');
const isConsentGranted = require('isConsentGranted');
const addConsentListener = require('addConsentListener');
const templateStorage = require('templateStorage');

// The queue only goes in where no function is: once the script has loaded, the global is the
// tracker's command function, and Google does not say that createArgumentsQueue keeps a
// function already there. Replaced, it would leave every call after a second firing (a History
// Change trigger, a second trigger), a consent withdrawal too, in a queue that nobody reads.
if (getType(copyFromWindow('discoveryFeedback')) !== 'function') {
  createArgumentsQueue('discoveryFeedback', 'discoveryFeedback.q');
}

// Once per page, however often the tag fires: a second init would be refused by the tracker.
if (!templateStorage.getItem('started')) {
  templateStorage.setItem('started', true);
  // GTM's consent decides: granted stores and sends; anything else keeps events in memory until
  // it is granted, and a later denial deletes what the tracker kept. GTM counts a consent type
  // that no default set as granted: a shop whose banner does not set Consent Mode's default
  // (denied) gets a tracker that starts granted (README "Google Tag Manager template").
  callInWindow('discoveryFeedback', 'init', {
    key: data.key,
    endpoint: data.endpoint,
    consent: isConsentGranted('analytics_storage') ? 'granted' : 'pending'
  });
  addConsentListener('analytics_storage', (consentType, granted) => {
    callInWindow('discoveryFeedback', 'consent', granted ? 'granted' : 'denied');
  });
}

// The cache token loads the script once per page, however often the tag fires.
const loadTracker = () => injectScript(data.scriptUrl, data.gtmOnSuccess, data.gtmOnFailure, 'discoveryFeedback');
if (data.bridgeDataLayer) {
  // The bridge first, then the tracker: the bridge reads the GA4 events pushed so far while the
  // tracker has not loaded, so a product page's view_item names the page's first view-page
  // instead of coming after it. If the bridge cannot load, the tracker still does.
  injectScript(data.bridgeUrl, loadTracker, loadTracker, 'discoveryFeedbackDataLayer');
} else {
  loadTracker();
}


___WEB_PERMISSIONS___

[
  {
    "instance": {
      "key": { "publicId": "access_globals", "versionId": "1" },
      "param": [
        {
          "key": "keys",
          "value": {
            "type": 2,
            "listItem": [
              {
                "type": 3,
                "mapKey": [
                  { "type": 1, "string": "key" },
                  { "type": 1, "string": "read" },
                  { "type": 1, "string": "write" },
                  { "type": 1, "string": "execute" }
                ],
                "mapValue": [
                  { "type": 1, "string": "discoveryFeedback" },
                  { "type": 8, "boolean": true },
                  { "type": 8, "boolean": true },
                  { "type": 8, "boolean": true }
                ]
              },
              {
                "type": 3,
                "mapKey": [
                  { "type": 1, "string": "key" },
                  { "type": 1, "string": "read" },
                  { "type": 1, "string": "write" },
                  { "type": 1, "string": "execute" }
                ],
                "mapValue": [
                  { "type": 1, "string": "discoveryFeedback.q" },
                  { "type": 8, "boolean": true },
                  { "type": 8, "boolean": true },
                  { "type": 8, "boolean": false }
                ]
              }
            ]
          }
        }
      ]
    },
    "clientAnnotations": { "isEditedByUser": true },
    "isRequired": true
  },
  {
    "instance": {
      "key": { "publicId": "inject_script", "versionId": "1" },
      "param": [
        {
          "key": "urls",
          "value": {
            "type": 2,
            "listItem": [
              { "type": 1, "string": "https://unpkg.com/discovery-feedback/*" },
              { "type": 1, "string": "https://unpkg.com/discovery-feedback@*" }
            ]
          }
        }
      ]
    },
    "clientAnnotations": { "isEditedByUser": true },
    "isRequired": true
  },
  {
    "instance": {
      "key": { "publicId": "access_consent", "versionId": "1" },
      "param": [
        {
          "key": "consentTypes",
          "value": {
            "type": 2,
            "listItem": [
              {
                "type": 3,
                "mapKey": [
                  { "type": 1, "string": "consentType" },
                  { "type": 1, "string": "read" },
                  { "type": 1, "string": "write" }
                ],
                "mapValue": [
                  { "type": 1, "string": "analytics_storage" },
                  { "type": 8, "boolean": true },
                  { "type": 8, "boolean": false }
                ]
              }
            ]
          }
        }
      ]
    },
    "clientAnnotations": { "isEditedByUser": true },
    "isRequired": true
  },
  {
    "instance": {
      "key": { "publicId": "access_template_storage", "versionId": "1" },
      "param": []
    },
    "isRequired": true
  }
]


___TESTS___

scenarios:
- name: Loads the bridge then the tracker, creates the tracker with the key and endpoint, and succeeds
  code: |-
    const injected = [];
    mock('injectScript', (url, onSuccess, onFailure, cacheToken) => {
      injected.push(url);
      onSuccess();
    });
    mock('callInWindow', () => {});
    mock('isConsentGranted', (consentType) => false);
    runCode(mockData);
    assertApi('createArgumentsQueue').wasCalledWith('discoveryFeedback', 'discoveryFeedback.q');
    assertApi('callInWindow').wasCalledWith('discoveryFeedback', 'init', { key: 'KEY', endpoint: '/df/events', consent: 'pending' });
    assertThat(injected).isEqualTo([mockData.bridgeUrl, mockData.scriptUrl]);
    assertApi('gtmOnSuccess').wasCalled();
    assertApi('gtmOnFailure').wasNotCalled();
- name: Fired again after the script has loaded, leaves the tracker's command function in place
  code: |-
    mock('copyFromWindow', (key) => (key === 'discoveryFeedback' ? () => {} : undefined));
    mock('callInWindow', () => {});
    mock('injectScript', (url, onSuccess, onFailure, cacheToken) => onSuccess());
    runCode(mockData);
    assertApi('createArgumentsQueue').wasNotCalled();
    assertApi('gtmOnSuccess').wasCalled();
setup: |-
  const mockData = {
    key: 'KEY',
    endpoint: '/df/events',
    scriptUrl: 'https://unpkg.com/discovery-feedback/dist/discovery-feedback.min.js',
    bridgeDataLayer: true,
    bridgeUrl: 'https://unpkg.com/discovery-feedback/dist/discovery-feedback-datalayer.min.js'
  };
