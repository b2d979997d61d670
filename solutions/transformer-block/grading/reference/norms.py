"""B1-B3, C5: LayerNorm and RMSNorm forward, and the closed-form LayerNorm backward."""
import torch
from torch import Tensor

# C5: u = [3, 1] has mean 2 and population std 1, so (u - 2) / 1.
LAYER_NORM_U = (1.0, -1.0)


def _stats(x: Tensor, eps: float):
    """mu, var: per-row mean and population variance over the last dim; rstd = 1/sqrt(var+eps)."""
    mu = x.mean(dim=-1, keepdim=True)                                   # (..., 1)
    var = (x - mu).pow(2).mean(dim=-1, keepdim=True)                    # (..., 1)
    rstd = torch.rsqrt(var + eps)                                       # (..., 1)
    return mu, var, rstd


def layer_norm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    """gamma * (x - mu) / sqrt(var + eps) + beta over the last dim.

    x: (..., d); gamma, beta: (d,); mu, var: per-row mean and population variance.
    """
    mu, _, rstd = _stats(x, eps)
    xhat = (x - mu) * rstd                                              # (..., d)
    return xhat * gamma + beta


def rms_norm(x: Tensor, gamma: Tensor, eps: float = 1e-6) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * gamma over the last dim; no centring, no shift."""
    ms = x.pow(2).mean(dim=-1, keepdim=True)                            # (..., 1)
    return x * torch.rsqrt(ms + eps) * gamma


def layer_norm_backward(grad_out: Tensor, x: Tensor, gamma: Tensor, eps: float = 1e-5):
    """Gradients of layer_norm from the closed form, without autograd.

    grad_out, x: (..., d); gamma: (d,).
    xhat = (x - mu) * rstd with rstd = 1/sqrt(var + eps); g = gamma * grad_out (the gradient
    reaching xhat). grad_x = rstd * (g - mean(g) - xhat * mean(g * xhat)), the means taken over
    the last dim; grad_gamma and grad_beta sum grad_out * xhat and grad_out over every leading dim.
    """
    if grad_out.shape != x.shape:
        raise ValueError(f"grad_out {tuple(grad_out.shape)} must have the shape of x {tuple(x.shape)}")
    d = x.shape[-1]
    mu, _, rstd = _stats(x, eps)
    xhat = (x - mu) * rstd                                              # (..., d)
    g = grad_out * gamma                                                # (..., d)
    g_mean = g.mean(dim=-1, keepdim=True)                               # (..., 1)
    gx_mean = (g * xhat).mean(dim=-1, keepdim=True)                     # (..., 1)
    grad_x = rstd * (g - g_mean - xhat * gx_mean)                       # (..., d)
    grad_gamma = (grad_out * xhat).reshape(-1, d).sum(dim=0)            # (d,)
    grad_beta = grad_out.reshape(-1, d).sum(dim=0)                      # (d,)
    return grad_x, grad_gamma, grad_beta
