package daemon

// SDNotify is sdNotify for the external tests.
var SDNotify = sdNotify
