project = "edge"

search "t1" {
  urls         = ["http://127.0.0.1:9200", "http://elastic:changeme@127.0.0.1:9201"] # ERROR: Credentials in a spec
  cluster_name = "t1"
}
