package client

// TarOneFile is tarOneFile, for the test that reads its archives back as
// the tool-server does (archive_test.go).
var TarOneFile = tarOneFile
