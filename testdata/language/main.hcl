# Every construct of the language at once: locals (in two blocks, one
# using the other out of order), functions, for_each on services and
# indices, dynamic blocks, and a sensitive value through a local.
project = "edge"

variable "host" {
  default = "127.0.0.1"
}

variable "auth_secret" {
  default   = "s3cr3t-path"
  sensitive = true
}

locals {
  ports  = { for name, app in local.apps : name => app.port }
  health = format("http://%s:%d/healthz", var.host, 9000)
}

locals {
  apps = {
    api  = { port = 8080, tags = ["public"] }
    jobs = { port = 8081, tags = [] }
  }
  checks      = { live = "10s", ready = "5s" }
  secret_path = upper(var.auth_secret)
  common      = { title = "string", hits = "integer" }
}

service "app" {
  for_each = local.apps
  address  = var.host
  port     = each.value.port
  tags     = concat(each.value.tags, [lower("Team-${each.key}")])
  meta     = { path = local.secret_path }

  dynamic "check" {
    for_each = local.checks
    labels   = [check.key]
    content {
      http     = "http://${var.host}:${each.value.port}/${check.key}"
      interval = check.value
    }
  }
}

service "worker" {
  for_each = toset(["a", "b"])
  name     = "worker"
  port     = 7000 + lookup({ a = 0, b = 1 }, each.key, 9)
}

service "solo" {
  name = "solo-svc"
  port = length("abc") * 1000

  check "health" {
    http     = local.health
    interval = "10s"
  }
}

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

index "logs" {
  for_each = toset(["a", "b"])
  search   = "t1"

  mapping "doc" {
    properties = merge(local.common, { "meta.${each.key}" = "keyword" })
  }
}

index "dash" {
  name   = ".dash"
  search = "t1"

  dynamic "mapping" {
    for_each = toset(["search", "visualization"])
    labels   = [mapping.key]
    content {
      properties = local.common
    }
  }
}
