// Types of store-location.js, for the specs that test it from TypeScript.

export interface StoreInfo {
  kind: string
  name?: string
}

export interface DocumentLocation {
  kind: string
  text: string
}

export type Sha256Hex = (text: string) => Promise<string>

export function parseStoreHeader(value: string | null | undefined): StoreInfo
export function documentLocation(store: StoreInfo, segments: string[], sha256Hex?: Sha256Hex, options?: { members?: boolean }): Promise<DocumentLocation>
export function encodeSegment(segment: string, sha256Hex?: Sha256Hex): Promise<string>
