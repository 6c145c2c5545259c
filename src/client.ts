/**
 * The discovery client: SPEC's search, autocomplete, collection and recommendation routes,
 * typed, each answer's rid passed on to the clicks on what it showed, and recommendation
 * shelves as stores for React, Vue or plain pages.
 *
 * @packageDocumentation
 */
export { createRecommendations } from './client/recommendations'
export { createClient } from './client/create-client'
export type {
  AutocompleteItem,
  AutocompleteRequest,
  AutocompleteResponse,
  ClientOptions,
  ContentItem,
  DiscoveryClient,
  DiscoveryError,
  Facet,
  Filter,
  LinkedTracker,
  Meta,
  Paging,
  ProductItem,
  RecommendationEvent,
  RecommendationEventName,
  RecommendationOptions,
  RecommendationPayloads,
  RecommendationState,
  RecommendationStore,
  RecommendRequest,
  RecommendResponse,
  RequestOptions,
  SearchContentRequest,
  SearchContentResponse,
  SmartCollectionRequest,
  SmartCollectionResponse,
  Sort,
  StoreUser
} from './client/types'
