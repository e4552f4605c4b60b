// Package store owns the files the server keeps between requests: the
// artifacts tools produce (screenshots, diff images), stored under an id,
// handed out as the Argent protocol's artifact handles, served back by id and
// evicted past a count or byte budget; and the archives of POST /upload,
// streamed to disk with their SHA-256 computed while they arrive, capped per
// upload and in total pending bytes, handed out once by id, and removed when
// used, when they fail, or when they expire unused.
package store
