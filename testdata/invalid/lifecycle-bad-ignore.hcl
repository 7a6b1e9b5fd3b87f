project = "edge"

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

index ".dashboard" {
  search = "t1"
  mapping "dashboard" {
    properties = { title = "string" }
  }
}

service "api" {
  port = 8080
  lifecycle {
    ignore_changes = [name] # ERROR: Invalid ignore_changes
  }
}

document "dashboard" "edge" {
  source = { title = "Edge" }
  lifecycle {
    ignore_changes = [source.provision] # ERROR: Invalid ignore_changes
  }
}
