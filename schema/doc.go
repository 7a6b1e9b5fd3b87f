// Package schema is the provision language: the HCL schema of the files
// under specs/, their decoding into a typed desired state that keeps the
// source range of every declaration, input variables, the Traefik rule
// grammar, and canonical formatting.
//
// Everything this package reports is an hcl.Diagnostic with a subject range,
// so a caller can print file, line, column and a snippet. It imports hcl,
// cty and their function libraries, and of provision's packages only the
// leaves: addrs (the addresses), parallel and traefik/labels (Traefik's
// label grammar, which a frontend's tags are judged by); it knows nothing
// of Consul or Elasticsearch clients. The kinds of object it decodes are
// defined by their own packages (Define).
package schema
