project = "edge"

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

index "logs" {
  for_each = toset(["a", "b"])
  name     = "logs" # ERROR: Duplicate instance index name
  search   = "t1"
  mapping "doc" {
    properties = { title = "string" }
  }
}
