output "inventory" {
  description = "The nodes in lsmbench's inventory format: [{name, address, port, user, key_file, data_dir, device, disk, remote_root}]."
  value = [
    for name in sort(keys(terraform_data.node)) : {
      for k, v in terraform_data.node[name].output : k => v if k != "tags"
    }
  ]
}
