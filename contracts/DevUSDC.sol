// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Eip3009Token - a dependency-free, USDC-like EIP-3009 token for the local devnet.
/// @notice Mirrors what x402's "exact" EVM scheme needs from Circle's FiatToken v2:
///         6 decimals, the EIP-712 domain ("USD Coin", "2"), transferWithAuthorization and
///         receiveWithAuthorization with (v,r,s), cancelAuthorization and authorizationState.
///         Minting is open to the deployer only. How a signature is checked is left to the two
///         tokens below, which share this storage layout (a test can swap one's code for the
///         other's at the same address). Compiled for the "shanghai" EVM (no mcopy / transient
///         storage).
abstract contract Eip3009Token {
    string public constant name = "USD Coin";
    string public constant symbol = "USDC";
    string public constant version = "2";
    uint8 public constant decimals = 6;

    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");
    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    uint256 private constant HALF_CURVE_ORDER =
        0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    address public immutable minter;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => mapping(bytes32 => bool)) private _authorizationStates;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);

    constructor() {
        minter = msg.sender;
    }

    /// @notice EIP-712 domain separator, computed per call so it follows the chain id.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(
            abi.encode(
                EIP712_DOMAIN_TYPEHASH, keccak256(bytes(name)), keccak256(bytes(version)), block.chainid, address(this)
            )
        );
    }

    function mint(address to, uint256 value) external {
        require(msg.sender == minter, "DevUSDC: caller is not the minter");
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    /// @notice Devnet only: the minter writes back what a renewed chain carries over (the devnet
    ///         renews its chain to drop history: src/devnet/evm/renewal.ts). Values are set, not
    ///         added, and no event is emitted: this is the state as it was, not new transfers.
    function restoreBalances(uint256 supply, address[] calldata holders, uint256[] calldata balances) external {
        require(msg.sender == minter, "DevUSDC: caller is not the minter");
        require(holders.length == balances.length, "DevUSDC: lengths differ");
        totalSupply = supply;
        for (uint256 i = 0; i < holders.length; i++) {
            balanceOf[holders[i]] = balances[i];
        }
    }

    /// @notice Devnet only (see restoreBalances): allowances as they were.
    function restoreAllowances(address[] calldata owners, address[] calldata spenders, uint256[] calldata values)
        external
    {
        require(msg.sender == minter, "DevUSDC: caller is not the minter");
        require(owners.length == spenders.length && owners.length == values.length, "DevUSDC: lengths differ");
        for (uint256 i = 0; i < owners.length; i++) {
            allowance[owners[i]][spenders[i]] = values[i];
        }
    }

    /// @notice Devnet only (see restoreBalances): authorizations used or cancelled stay unusable.
    function restoreAuthorizations(address[] calldata authorizers, bytes32[] calldata nonces) external {
        require(msg.sender == minter, "DevUSDC: caller is not the minter");
        require(authorizers.length == nonces.length, "DevUSDC: lengths differ");
        for (uint256 i = 0; i < authorizers.length; i++) {
            _authorizationStates[authorizers[i]][nonces[i]] = true;
        }
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= value, "ERC20: transfer amount exceeds allowance");
        if (allowed != type(uint256).max) {
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationStates[authorizer][nonce];
    }

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v)
        );
    }

    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v)
        );
    }

    function cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) external {
        require(!_authorizationStates[authorizer][nonce], "FiatTokenV2: authorization is used or canceled");
        bytes32 structHash = keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce));
        require(_isValidSignature(authorizer, _digest(structHash), signature), "FiatTokenV2: invalid signature");
        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    function _transferWithAuthorization(
        bytes32 typeHash,
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) internal {
        require(block.timestamp > validAfter, "FiatTokenV2: authorization is not yet valid");
        require(block.timestamp < validBefore, "FiatTokenV2: authorization is expired");
        require(!_authorizationStates[from][nonce], "FiatTokenV2: authorization is used or canceled");
        bytes32 structHash = keccak256(abi.encode(typeHash, from, to, value, validAfter, validBefore, nonce));
        require(_isValidSignature(from, _digest(structHash), signature), "FiatTokenV2: invalid signature");
        _authorizationStates[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);
        _transfer(from, to, value);
    }

    function _transfer(address from, address to, uint256 value) private {
        require(to != address(0), "ERC20: transfer to the zero address");
        uint256 balance = balanceOf[from];
        require(balance >= value, "ERC20: transfer amount exceeds balance");
        unchecked {
            balanceOf[from] = balance - value;
        }
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }

    function _digest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
    }

    /// @dev Whether `signature` is `signer`'s over `digest`: each token says how it checks.
    function _isValidSignature(address signer, bytes32 digest, bytes memory signature)
        internal
        view
        virtual
        returns (bool);

    function _recover(bytes32 digest, bytes memory signature) internal pure returns (address) {
        if (signature.length != 65) {
            return address(0);
        }
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        if (v < 27) {
            v += 27;
        }
        if (uint256(s) > HALF_CURVE_ORDER || (v != 27 && v != 28)) {
            return address(0);
        }
        return ecrecover(digest, v, r, s);
    }
}

/// @title DevUSDC - the devnet's USDC, as Circle's FiatToken v2.2 behaves.
/// @notice Adds the `bytes signature` overloads, and checks signatures as v2.2 does: an address
///         without code by ecrecover, a contract wallet through ERC-1271 `isValidSignature`.
contract DevUSDC is Eip3009Token {
    bytes4 private constant ERC1271_MAGIC_VALUE = 0x1626ba7e;

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, signature
        );
    }

    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, signature
        );
    }

    /// @dev EOA signatures are recovered with ecrecover; contract wallets answer through ERC-1271.
    function _isValidSignature(address signer, bytes32 digest, bytes memory signature)
        internal
        view
        override
        returns (bool)
    {
        if (signer.code.length == 0) {
            return _recover(digest, signature) == signer;
        }
        (bool ok, bytes memory result) =
            signer.staticcall(abi.encodeWithSelector(ERC1271_MAGIC_VALUE, digest, signature));
        return ok && result.length >= 32 && abi.decode(result, (bytes32)) == bytes32(ERC1271_MAGIC_VALUE);
    }
}

/// @title DevUSDCv21 - an EIP-3009 token as Circle's FiatToken v2.1 (and most other EIP-3009
///         tokens) behaves: only the (v,r,s) overloads, signatures checked by ecrecover alone, so
///         a contract wallet's signature can never move its funds. Tests plant its code at the
///         devnet USDC's address to play a token that cannot accept a smart-contract wallet.
contract DevUSDCv21 is Eip3009Token {
    function _isValidSignature(address signer, bytes32 digest, bytes memory signature)
        internal
        pure
        override
        returns (bool)
    {
        return signer != address(0) && _recover(digest, signature) == signer;
    }
}
