/// The sizes of the API's list answers (api.md "Lists"), in one place for the server that
/// enforces them and the clients that page through them: a client that takes a full page
/// for "more follow" must agree with the server on what full is.
public enum ListBounds {
    /// Items in a page when the request names no `limit`.
    public static let defaultLimit = 50
    /// The most items in one page; a larger `limit` is clamped to this.
    public static let maximumLimit = 500
    /// The most visitors a gate's lookup answers (it has no cursor).
    public static let lookupLimit = 20
}
