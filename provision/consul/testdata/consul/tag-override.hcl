# The same page's enable_tag_override example, as written, with the
# project line.
project = "consul-docs"

service {
  name = "redis"
  port = 6379
  enable_tag_override = true
}
