"""GLSL pieces shared by the views' shaders (GLSL 1.20 / ES 2.0, as VisPy compiles them).

Fields live in float textures (textures.py); the colour map is a 256×1 RGBA texture looked up
exactly as `ColorScale.rgba` does (entry floor((v − lo)·255/(hi − lo)) clipped to 0..255, NaN →
entry 0), so the GPU and the software renderer agree on every colour.

`PICK` is the level of detail of the fragment shaders: where one pixel covers several texels (a
large field seen whole, or zoomed out), the pixel shows the texel of its footprint (up to 4×4
texels) that differs most from the nearest one, so a feature narrower than a pixel still shows
(a plain nearest sample would drop it); where a pixel covers at most one texel it shows the
nearest texel, exactly.
"""

COLORMAP = """
uniform sampler2D u_cmap;
uniform vec2 u_clim;
vec4 colormap(float v) {
    float i = 0.0;
    if (v == v) {
        i = clamp(floor((v - u_clim.x) * (255.0 / (u_clim.y - u_clim.x))), 0.0, 255.0);
    }
    return texture2D(u_cmap, vec2((i + 0.5) / 256.0, 0.5));
}
"""

# texel lookups by integer texel index (as floats) of a texture of size (w, h)
TEXEL = """
float texel(sampler2D tex, vec2 size, vec2 ij) {
    return texture2D(tex, (clamp(ij, vec2(0.0), size - 1.0) + 0.5) / size).r;
}
vec2 packed_at(float k, vec2 size) {
    float row = floor(k / size.x);
    return vec2((k - row * size.x + 0.5) / size.x, (row + 0.5) / size.y);
}
"""

PICK = """
// the texel shown at continuous texel position ij (see glsl.py); fp: texels a pixel covers
// along each axis (from dFdx/dFdy, taken by the caller in uniform control flow); `at` returns
// the index of the texel chosen
float pick(sampler2D tex, vec2 size, vec2 ij, vec2 fp, out vec2 at) {
    vec2 c = clamp(floor(ij + 0.5), vec2(0.0), size - 1.0);
    float v = texel(tex, size, c);
    at = c;
    vec2 k = min(floor(fp), vec2(3.0));
    if (k.x + k.y < 1.0) {
        return v;
    }
    float best = v;
    float dev = -1.0;
    for (int a = 0; a < 4; a++) {
        if (float(a) > k.x) break;
        for (int b = 0; b < 4; b++) {
            if (float(b) > k.y) break;
            vec2 p = clamp(c + floor(vec2(float(a), float(b)) - 0.5 * k + 0.5), vec2(0.0),
                           size - 1.0);
            float s = texel(tex, size, p);
            if (abs(s - v) > dev) {
                dev = abs(s - v);
                best = s;
                at = p;
            }
        }
    }
    return best;
}
"""

# two-sided diffuse light from a direction fixed to the data, plus ambient
SHADE = """
uniform vec3 u_light;
vec3 shade(vec3 rgb, vec3 normal) {
    float d = abs(dot(normalize(normal), u_light));
    return rgb * (0.42 + 0.58 * d);
}
"""
