# torch.nn.Module as mask code uses it, written for hasseflow from torch's documented behaviour:
# a base class whose subclasses keep tensors and numbers as attributes, register buffers by name,
# run `forward` when called, and return themselves when moved or switched between training and
# evaluation. Parameters and submodules (nn.Linear, ...) are not modelled: their weights are
# random or learnt, and a mask that reads them is refused where it reads them.


class Module:
    training = True

    def __init__(self, *args, **kwargs):
        pass

    def register_buffer(self, name, tensor, persistent=True):
        setattr(self, name, tensor)

    def to(self, *args, **kwargs):
        return self

    def cuda(self, device=None):
        return self

    def cpu(self):
        return self

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        return self

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)
