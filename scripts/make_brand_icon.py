"""Draw the brand icon: custom_components/local_assistant/brand/icon{,@2x}.png.

Run with .venv/bin/python (Pillow comes with Home Assistant). HA serves a custom
integration's brand/ images in the UI, and HACS shows them; the sizes follow the
HA brands rules (icon 256x256, icon@2x 512x512, transparent background).
A speech bubble (Assist) around a house with sound waves (a voice in the home).
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

BRAND = (
    Path(__file__).resolve().parent.parent / "custom_components/local_assistant/brand"
)
S = 2048  # drawn large, then scaled down for smooth edges
BLUE = (33, 150, 243, 255)
WHITE = (255, 255, 255, 255)


def draw() -> Image.Image:
    """The icon at S x S."""
    img = Image.new("RGBA", (S, S), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    margin = 40
    d.rounded_rectangle((margin, margin, S - margin, S - 360), radius=380, fill=BLUE)
    d.polygon([(360, S - 420), (860, S - 420), (300, S - margin)], fill=BLUE)
    cx, top = S // 2, 330
    d.polygon([(cx, top), (cx + 500, top + 480), (cx - 500, top + 480)], fill=WHITE)
    d.rectangle((cx - 370, top + 440, cx + 370, top + 1090), fill=WHITE)
    d.rounded_rectangle(
        (cx - 130, top + 730, cx + 130, top + 1090), radius=60, fill=BLUE
    )
    d.rectangle((cx + 230, top + 110, cx + 350, top + 330), fill=WHITE)
    for r in (720, 860):
        box = (cx - r, top + 800 - r, cx + r, top + 800 + r)
        d.arc(box, start=-30, end=30, fill=WHITE, width=70)
        d.arc(box, start=150, end=210, fill=WHITE, width=70)
    return img


def main() -> None:
    """Write both sizes."""
    img = draw()
    BRAND.mkdir(exist_ok=True)
    for size, name in ((256, "icon.png"), (512, "icon@2x.png")):
        img.resize((size, size), Image.Resampling.LANCZOS).save(
            BRAND / name, optimize=True
        )


if __name__ == "__main__":
    main()
