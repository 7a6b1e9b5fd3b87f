// Package schema is the provision language: the HCL schema of the files
// under specs/, their decoding into a typed desired state that keeps the
// source range of every declaration, input variables, the Traefik rule
// grammar, and canonical formatting.
//
// Everything this package reports is an hcl.Diagnostic with a subject range,
// so a caller can print file, line, column and a snippet. It imports only
// hcl and cty: it knows nothing of Consul or Elasticsearch clients.
package schema
