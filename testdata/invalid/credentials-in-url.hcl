project = "edge"

search "t1" {
  url          = "http://elastic:changeme@127.0.0.1:9200" # ERROR: Credentials in a spec
  cluster_name = "t1"
}
