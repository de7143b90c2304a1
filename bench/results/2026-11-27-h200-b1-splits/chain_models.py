"""Session 20: small chains of vgg16's batch-1 3x3 512->512 @28² layer, exported to ONNX, to see
whether a layer inside a network costs what it costs alone (vkcnn-bench-conv) and whether the
first dispatch of a pipeline in an inference pays more than the ones after it."""
import sys
import torch

out = sys.argv[1]
torch.manual_seed(0)


def conv(cin, cout, k):
    return [torch.nn.Conv2d(cin, cout, k, padding=k // 2), torch.nn.ReLU()]


models = {
    # The same layer four times: one pipeline, run back to back.
    "same4": torch.nn.Sequential(*(conv(512, 512, 3) * 1 + conv(512, 512, 3) + conv(512, 512, 3)
                                   + conv(512, 512, 3))),
    # The layer with a 3x3 average pool (another shader) between each pair.
    "pooled": torch.nn.Sequential(*conv(512, 512, 3), torch.nn.AvgPool2d(3, 1, 1),
                                  *conv(512, 512, 3), torch.nn.AvgPool2d(3, 1, 1),
                                  *conv(512, 512, 3)),
    # vgg16's own order: 256->512, then two 512->512 at 28², a max pool, three 512->512 at 14².
    "vggtail": torch.nn.Sequential(*conv(256, 512, 3), *conv(512, 512, 3), *conv(512, 512, 3),
                                   torch.nn.MaxPool2d(2), *conv(512, 512, 3), *conv(512, 512, 3),
                                   *conv(512, 512, 3)),
}
for name, m in models.items():
    m.eval()
    cin = m[0].in_channels
    x = torch.randn(1, cin, 28, 28)
    torch.onnx.export(m, (x,), f"{out}/{name}.onnx", input_names=["input"],
                      output_names=["output"], opset_version=17, dynamo=False)
    print("exported", name)
