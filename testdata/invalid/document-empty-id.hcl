project = "edge"

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

index ".dashboard" {
  search = "t1"
  mapping "search" {
    properties = { title = "string" }
  }
}

document "search" "errors" {
  id     = "" # ERROR: Invalid document id
  source = { title = "Errors" }
}
