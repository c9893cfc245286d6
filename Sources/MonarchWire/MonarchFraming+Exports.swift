// The byte level of the protocol (frames, their lengths, socket addresses) lives in
// MonarchFraming, below both this module and the libuv layer; whoever imports MonarchWire
// sees it too.
@_exported import MonarchFraming
