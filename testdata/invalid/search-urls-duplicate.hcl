project = "edge"

search "t1" {
  urls         = ["http://127.0.0.1:9200", "http://127.0.0.1:9200"] # ERROR: Duplicate search URL
  cluster_name = "t1"
}
