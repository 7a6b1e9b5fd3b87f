project = "edge"

search "t.1" { # ERROR: Invalid search name
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}
