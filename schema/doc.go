// Package schema is the provision language: the HCL schema of the files
// under specs/, their decoding into a typed desired state that keeps the
// source range of every declaration, input variables, modules, and
// canonical formatting.
//
// Everything this package reports is an hcl.Diagnostic with a subject range,
// so a caller can print file, line, column and a snippet. It imports hcl,
// cty and their function libraries, and of provision's packages only the
// leaves: addrs (the addresses) and parallel; it knows nothing of
// Consul, Elasticsearch or Traefik. The kinds of object are made by
// their own packages (NewKind), which decode their blocks' bodies with a
// Decoder: consul.Service, kv.Key, search.Index and search.Document; so
// are the places, the blocks that say where a live system is
// (PlaceSchema): consul.AgentPlace, consul.SettingsPlace,
// consul.ProxyPlace, search.SearchPlace and traefik.ProxyPlace. A binary
// names the ones it knows in one Language, which its main builds and
// hands to NewParser: nothing is registered at init.
package schema
