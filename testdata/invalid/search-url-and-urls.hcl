project = "edge"

search "t1" {
  url          = "http://127.0.0.1:9200"
  urls         = ["http://127.0.0.1:9201"] # ERROR: Both url and urls
  cluster_name = "t1"
}
